import { describe, expect, it } from "vitest";
import { isPersonalKey, scrubber, shareTags } from "../../app/share/scrub.server.js";

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

  it("knows the keys that name a player or user, in any case and spelling", () => {
    const personal = [
      "player", "Player", "player_name", "player-name", "playerName", "PLAYER.ID", "plr", "players",
      "user", "users", "uid", "UID", "user_id", "userId", "userid", "user-id", "username", "user.username", "user.email", "user.ip_address",
      "name", "display_name", "DisplayName", "id", "email", "nickname", "roblox_user_id", "target_player_name", "character_name",
    ];
    const other = ["combat", "weapon", "server", "place_id", "release", "environment", "level", "playtime", "usage", "idle", "job_id", "shop"];
    expect(personal.filter((k) => !isPersonalKey(k))).toEqual([]);
    expect(other.filter(isPersonalKey)).toEqual([]);
  });

  it("drops tags by key and by what their text holds, keeps the rest, and an emptied list is null", () => {
    expect(
      shareTags(
        ["player:SecretName", "uid:111222333", "user.email=a@b.test", "combat", "weapon:sword", "Builderman", "buyer:builderman", "note:seen by 261", "save:Player_123456", "line:2612"],
        scrub,
      ),
    ).toEqual(["combat", "weapon:sword", "line:2612"]);
    expect(shareTags(["player:x", "Bo2"], scrub)).toEqual(["Bo2"]);
    expect(shareTags(["name:x"], scrub)).toBeNull();
    expect(shareTags(null, scrub)).toBeNull();
  });
});
