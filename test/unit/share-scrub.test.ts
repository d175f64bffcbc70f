import { describe, expect, it } from "vitest";
import { scrubber } from "../../app/share/scrub.server.js";

describe("share-view scrubbing", () => {
  const scrub = scrubber({ names: ["Builderman", "Bo"], ids: ["261"] });

  it("removes names in instance paths, id-like keys and the known players, and keeps what identifies code", () => {
    expect(scrub("Players.Builderman.PlayerGui.Hud:5: attempt to index nil")).toBe("Players.<player>.PlayerGui.Hud:5: attempt to index nil");
    expect(scrub("Players.LocalPlayer.PlayerGui.Hud:5")).toBe("Players.LocalPlayer.PlayerGui.Hud:5");
    expect(scrub("GetAsync(Player_123456) failed; key=98765; userId is 4321; users/777888")).toBe(
      "GetAsync(Player_<id>) failed; key=<id>; userId is <id>; users/<id>",
    );
    expect(scrub("builderman (261) left")).toBe("<player> (<id>) left");
    // numbers that are code or data stay: line numbers, parts, short values, a name of 2 letters
    expect(scrub("Workspace.Part2612:12: index 57 out of range; Bob")).toBe("Workspace.Part2612:12: index 57 out of range; Bob");
  });
});
