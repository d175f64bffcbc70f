import { describe, expect, it } from "vitest";
import { isPredictable, passwordProblem, PASSWORD_CONTEXTUAL, PASSWORD_REPETITIVE } from "../../app/accounts/password-rule.server.js";

describe("the password rule", () => {
  it("counts characters, not UTF-16 units, for the minimum, and keeps the 1,024 maximum", () => {
    expect(passwordProblem("ab1!xy7")).toBe("must be at least 8 characters");
    // seven emoji are 14 UTF-16 units but 7 characters
    expect(passwordProblem("🦊🐙🌵🎲🧭🪁🫖")).toBe("must be at least 8 characters");
    expect(passwordProblem("🦊🐙🌵🎲🧭🪁🫖🎻")).toBeUndefined();
    expect(passwordProblem("x".repeat(1025))).toBe("must be at most 1024 characters");
    expect(passwordProblem("plum tractor ".repeat(78).slice(0, 1024))).toBeUndefined();
  });

  it("refuses whitespace only and the most common passwords", () => {
    expect(passwordProblem("        ")).toBe("must not be only spaces");
    expect(passwordProblem("Password1")).toMatch(/most common/);
    expect(passwordProblem("12345678")).toMatch(/most common/);
  });

  it("refuses repetitive and sequential characters, keyboard runs included, in any case or spacing", () => {
    for (const p of ["aaaaaaaa", "abcdefgh", "87654321", "hgfedcba", "zyxwvutsrq", "qwertyuiop[]", "poiuytre", "asdfghjkl;", "zxcvbnm,./",
      "abababab", "123123123", "xyz!xyz!xyz!", "AaAaAaAa", "abcd efgh", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "aaaazzzz", "lmnop98765", "78901234", "########"]) {
      expect(passwordProblem(p), p).toBe(PASSWORD_REPETITIVE);
    }
  });

  it("refuses keyboard runs typed with shift held, forward and backward, as it refuses the unshifted ones", () => {
    for (const p of ["!@#$%^&*", ")(*&^%$#", "~!@#$%^&*()_+", "+_)(*&^%", "QWERTYUIOP{}|", "}{POIUYTREWQ", 'ASDFGHJKL:"', "ZXCVBNM<>?", "?><MNBVC",
      "!@#$5678", "!@#$qwer", "!@#$ %^&*"]) {
      expect(passwordProblem(p), p).toBe(PASSWORD_REPETITIVE);
    }
    // shifted symbols that do not run along a row are as good as before
    for (const p of ["Tr0ub4dor&3", "!a@b#c$d%e", "#Pl4y3r!Sw0rd", "^_^ plum tractor"]) expect(passwordProblem(p), p).toBeUndefined();
  });

  it("refuses the product's name and the user's own email with little else", () => {
    for (const p of ["robloxmonitor", "Roblox Monitor", "roblox monitor 2024!", "RobloxMonitor123", "roblox12", "monitor!!"]) {
      expect(passwordProblem(p), p).toBe(PASSWORD_CONTEXTUAL);
    }
    const account = { email: "mira.stone@pixelforge.example" };
    for (const p of ["mira.stone@pixelforge.example", "MiraStone1990", "stone-mira-2", "pixelforge!!", "mira.stone@pixelforge.example and more"]) {
      expect(passwordProblem(p, account), p).toBe(PASSWORD_CONTEXTUAL);
    }
    // without the account, the same password is judged on its own
    expect(passwordProblem("MiraStone1990")).toBeUndefined();
  });

  it("accepts ordinary long passwords and passphrases, even beside a context word", () => {
    for (const p of ["correct horse battery", "Tr0ub4dor&3", "xkcd1234", "zebra crossing", "my roblox game crashes on tuesdays", "the teammate's own passphrase"]) {
      expect(passwordProblem(p, { email: "mira.stone@pixelforge.example" }), p).toBeUndefined();
    }
  });

  it("isPredictable: one or two steady runs, or a short repeated unit; a third run breaks it", () => {
    expect(isPredictable("abcd1234")).toBe(true);
    expect(isPredictable("abcd1234wxyz")).toBe(false);
    expect(isPredictable("abcabcab")).toBe(true);
    expect(isPredictable("abcdeabcde")).toBe(true);
    expect(isPredictable("tulip4ever")).toBe(false);
  });
});
