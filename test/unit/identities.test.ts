import { describe, expect, it } from "vitest";
import { eventIdentities, IDENTITY_CAP, identitiesIn, joinIdentities } from "../../db/identities.js";

const event = (over: Partial<Parameters<typeof eventIdentities>[0]>) => ({
  playerName: null,
  userId: null,
  message: "",
  stackTrace: null,
  culprit: null,
  tags: null,
  context: null,
  ...over,
});

describe("who an event names", () => {
  it("reads its player, user id, players in its paths, and values under personal tag and context keys, its own player first", () => {
    expect(
      eventIdentities(
        event({
          playerName: " Builderman ",
          userId: "261261",
          message: "Players.Builderman.PlayerGui.Hud:5: index nil; Players.LocalPlayer; Players.Guest77.Backpack",
          stackTrace: "Players.StackKid.PlayerScripts.Main:3",
          culprit: "Players.CulpritKid.Backpack.Tool",
          tags: ["player:TagKid", "uid:111222333", "weapon:sword", "Barekid", "user.email=kid@example.test"],
          context: { note: "CtxNote", player_name: "CtxKid", user: { id: 5550001112, username: "SentryKid" }, level: 4 },
        }),
      ),
    ).toEqual([
      "Builderman", "261261", "Guest77", "StackKid", "CulpritKid", "TagKid", "111222333", "kid@example.test", "CtxKid", "5550001112", "SentryKid",
    ]);
  });

  it("leaves out what cannot be a name (under 3 or over 64 characters) and stops at the cap", () => {
    expect(eventIdentities(event({ playerName: "Bo", tags: [`player:${"x".repeat(65)}`], userId: 42 }))).toEqual([]);
    const crowd = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, `Kid${i}`]));
    const all = eventIdentities(event({ playerName: "First", context: { players: crowd } }));
    expect(all).toHaveLength(IDENTITY_CAP);
    expect(all[0]).toBe("First");
  });

  it("joins two lists first ones first, without repeats, at most the cap", () => {
    expect(joinIdentities(["a1x", "b2y"], ["b2y", "c3z"])).toEqual(["a1x", "b2y", "c3z"]);
    const many = Array.from({ length: 40 }, (_, i) => `Kid${i}`);
    expect(joinIdentities(["Keep"], many)).toEqual(["Keep", ...many.slice(0, IDENTITY_CAP - 1)]);
  });

  it("keeps of an event only what its shown text holds, in any case", () => {
    const e = event({ playerName: "Builderman", userId: 261261, message: "builderman (Player_261261) kicked", tags: ["player:Other"], context: { user: { email: "a@b.test" } } });
    expect(identitiesIn(e, [e.message, null])).toEqual(["Builderman", "261261"]);
    expect(identitiesIn(e, ["Shop.Buy"])).toEqual([]);
    expect(identitiesIn(e, [null])).toEqual([]);
  });
});
