import { describe, expect, it } from "vitest";
import { issueTitle, withTitle } from "~/errors/title.server";

describe("issue titles", () => {
  it("title an issue by its grouping form: no player's name, key or numbered instance", () => {
    expect(issueTitle("Players.Player134_Speedy.PlayerGui.ShopGui.Buy:42: attempt to index nil with 'Price'")).toBe(
      "Players.<player>.PlayerGui.ShopGui.Buy:42: attempt to index nil with 'Price'",
    );
    expect(issueTitle("DataStore request was added to queue. Key = Player_10261327")).toBe("DataStore request was added to queue. Key = <key>");
    expect(issueTitle("Spawn3 is not a valid member of Folder \"Workspace.Map.Spawns\"")).toBe("<child> is not a valid member of Folder \"Workspace.Map.Spawns\"");
    expect(issueTitle("Workspace.Map.Spawns.Spawn3.Pad:10: touched nil")).toBe("Workspace.Map.Spawns.Spawn<n>.Pad:10: touched nil");
  });

  it("titles show version 4's data forms: request ids, ids inside names, quoted data; quoted code stays", () => {
    expect(issueTitle(`Shop API: HTTP 500 (Internal Server Error) {"error":"internal","request_id":"01HGW2N7Q8ZK3X4Y5V6T7R8S9A"}`)).toBe(
      `Shop API: HTTP 500 (Internal Server Error) {"error":"internal","request_id":"<id>"}`,
    );
    expect(issueTitle("ReplicatedStorage.Pets.Equip:22: cannot equip '炎の剣 🐉' from Inventory_98817723")).toBe(
      "ReplicatedStorage.Pets.Equip:22: cannot equip '<str>' from Inventory_<n>",
    );
    expect(issueTitle("ReplicatedStorage.Pets.Follow:48: attempt to index nil with 'Character'")).toBe("ReplicatedStorage.Pets.Follow:48: attempt to index nil with 'Character'");
  });

  it("keeps a message without variables as it is, and never returns an empty title", () => {
    expect(issueTitle("Shop opened")).toBe("Shop opened");
    expect(issueTitle("ServerScriptService.Shop:88: attempt to index nil with 'Price'")).toBe("ServerScriptService.Shop:88: attempt to index nil with 'Price'");
    expect(issueTitle("ServerScriptService.Shop:88:")).toBe("ServerScriptService.Shop:88");
    expect(issueTitle("   ")).toBe("   ");
  });

  it("withTitle adds the title beside the message, which stays raw", () => {
    expect(withTitle({ id: "x", message: "Players.Builderman.Backpack.Tool:3: boom" })).toEqual({
      id: "x",
      message: "Players.Builderman.Backpack.Tool:3: boom",
      title: "Players.<player>.Backpack.Tool:3: boom",
    });
  });
});
