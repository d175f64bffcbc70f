import { describe, expect, it } from "vitest";
import { urlProblem } from "../../app/sdk/onboarding.server";

describe("urlProblem: can a Roblox game server reach this URL?", () => {
  it.each([
    ["http://127.0.0.1:3000", true, "loopback"],
    ["http://localhost:3000", false, "loopback"],
    ["http://[::1]:3000", true, "loopback"],
    ["http://0.0.0.0:3000", true, "loopback"],
    ["http://192.168.1.20:3000", true, "private"],
    ["http://10.0.0.5", true, "private"],
    ["http://172.20.1.1", true, "private"],
    ["http://monitor.local", true, "private"],
    ["https://errors.example.com", false, "unset"],
    ["https://errors.example.com", true, null],
    ["http://172.32.0.1", true, null],
  ] as const)("%s (PUBLIC_URL set: %s) -> %s", (url, set, expected) => {
    expect(urlProblem(url, set)).toBe(expected);
  });
});
