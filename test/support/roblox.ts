import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { LuauState } from "luau-web";
import { bundleSdk, SDK_VERSION } from "../../app/sdk/bundle.js";
import { readSdkSources } from "../../app/sdk/sources.server.js";

const root = path.resolve(import.meta.dirname, "../..");
const mockSource = readFileSync(path.join(root, "test/sdk/roblox-mock.luau"), "utf8");

export type SignalBehavior = "Deferred" | "Immediate";

/** Requests other than health reports (which go on their own lane once a minute: see Health.luau). */
export const notHealth = (r: { url: string }) => !r.url.endsWith("/api/health");

/** Enum.CloseReason's names (BindToClose) and Enum.PlayerExitReason's (PlayerRemoving). */
export const CLOSE_REASONS = ["Unknown", "RobloxMaintenance", "DeveloperShutdown", "DeveloperUpdate", "ServerEmpty", "OutOfMemory"] as const;
export type CloseReason = (typeof CLOSE_REASONS)[number];
export const EXIT_REASONS = ["Unknown", "PlatformKick", "CreatorKick"] as const;
export type ExitReason = (typeof EXIT_REASONS)[number];

/** What the test engine's Stats service and workspace report (roblox-mock.luau, `statFigures`). */
export type StatFigures = {
  totalMb: number;
  /** MB by Enum.DeveloperMemoryTag name */
  tags: Record<string, number>;
  /** seconds, as Stats.HeartbeatTime */
  heartbeatTime: number;
  physicsStepTime: number;
  instanceCount: number;
  dataReceiveKbps: number;
  dataSendKbps: number;
  memoryTrackingEnabled: boolean;
  physicsFps: number;
};

/** The signal behavior servers get by default: ROBLOX_SIGNAL_BEHAVIOR (the suite runs once under each). */
export function defaultSignalBehavior(): SignalBehavior {
  const name = process.env.ROBLOX_SIGNAL_BEHAVIOR ?? "Deferred";
  if (name !== "Deferred" && name !== "Immediate") throw new Error(`ROBLOX_SIGNAL_BEHAVIOR must be Deferred or Immediate, not ${name}`);
  return name;
}

/** A request as the engine sent it: `body` is the text the script gave; with `gzip` it travelled compressed (`bytes` on the wire). */
export type SentRequest = {
  at: number;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  gzip: boolean;
  bytes: number;
  status: number | "network error";
};

export type RobloxOptions = {
  /** Where HttpService requests go (the real service, or a proxy in front of it). */
  placeId?: number;
  placeVersion?: number;
  jobId?: string;
  httpEnabled?: boolean;
  /** False: reading HttpService.HttpEnabled raises, as where the engine forbids it. */
  httpEnabledReadable?: boolean;
  studio?: boolean;
  /** Secrets in the experience's store: a value (usable with any host), or a value and its allowed domain ("*.example.com", "127.0.0.1"). */
  secrets?: Record<string, string | { value: string; domain: string }>;
  /** Simulated seconds each HttpService request takes once it left (default 0.1); at or over its Timeout (default 30) it times out. */
  httpLatency?: number;
  /** Simulated seconds before a request leaves the server (default 0.02): one begun just before the server closes never leaves. */
  httpStartDelay?: number;
  /** What DateTime.now() says at simulated time 0 (ms since the epoch; default: when the server is made): servers of one test on one clock. */
  epochMs?: number;
  /** Workspace.SignalBehavior; default: the ROBLOX_SIGNAL_BEHAVIOR environment variable, else Deferred. */
  signalBehavior?: SignalBehavior;
  /**
   * Run as this player's client instead of a game server. `remote: false`: the server's RemoteEvent
   * has not replicated (the server never created it).
   */
  client?: { userId: number; name: string; remote?: boolean };
};

/**
 * One simulated Roblox server running the bundled SDK in real Luau (luau-web). HttpService
 * requests are real HTTP requests; time is simulated and moves only through `advance`.
 */
export async function createRobloxServer(options: RobloxOptions = {}) {
  const requests: SentRequest[] = [];
  const warnings: string[] = [];
  const prints: string[] = [];
  const threadErrors: string[] = [];
  /** Payloads the client fired at the server, waiting for `deliverTo`. */
  const outbox: { remote: string; payloadJson: string }[] = [];
  /** Every payload this client fired (as JSON), delivered or not. */
  const fired: unknown[] = [];
  const host = {
    epochMs: options.epochMs ?? Date.now(),
    warn: (message: string) => void warnings.push(message),
    print: (message: string) => void prints.push(message),
    threadError: (message: string) => void threadErrors.push(message),
    fireServer: (remote: string, payloadJson: string) => {
      if (!options.client) throw new Error("FireServer is a client call");
      outbox.push({ remote, payloadJson });
      fired.push(JSON.parse(payloadJson));
    },
    request: async (now: number, method: string, url: string, headersJson: string, body: string, gzip: boolean) => {
      const headers = JSON.parse(headersJson) as Record<string, string>;
      // Compress = Gzip: the engine gzips the body and says so in Content-Encoding
      const payload = gzip ? gzipSync(Buffer.from(body, "utf8")) : Buffer.from(body, "utf8");
      if (gzip) headers["Content-Encoding"] = "gzip";
      const sent: SentRequest = { at: now, method, url, headers, body, gzip: Boolean(gzip), bytes: payload.length, status: "network error" };
      requests.push(sent);
      try {
        const res = await fetch(url, { method, headers, body: method === "GET" ? undefined : payload });
        const text = await res.text();
        sent.status = res.status;
        return [true, res.status, res.statusText, JSON.stringify(Object.fromEntries(res.headers)), text];
      } catch {
        return [false, "ConnectFail"];
      }
    },
  };
  // Never destroyed: with luau-web 1.4.0 a state created after another was destroyed in the same
  // process cannot run code, and its wasm memory (about 16 MB per process) does not grow, so a
  // test file keeps to a dozen or so simulated servers.
  const state = await LuauState.createAsync({ __host: host });
  const [mock] = (await state.loadstring(mockSource, "=RobloxMock", true)()) as [any];
  await mock.setSignalBehavior(options.signalBehavior ?? defaultSignalBehavior());
  mock.game.PlaceId = options.placeId ?? 0;
  mock.game.PlaceVersion = options.placeVersion ?? 0;
  mock.game.JobId = options.jobId ?? "";
  mock.studio = options.studio ?? false;
  await mock.setHttpEnabled(options.httpEnabled ?? true, options.httpEnabledReadable ?? true);
  for (const [name, secret] of Object.entries(options.secrets ?? {}))
    await (typeof secret === "string" ? mock.setSecret(name, secret, "*") : mock.setSecret(name, secret.value, secret.domain));
  if (options.httpLatency !== undefined) await mock.setHttpLatency(options.httpLatency);
  if (options.httpStartDelay !== undefined) mock.httpStartDelay = options.httpStartDelay;
  if (options.client)
    await mock.becomeClient(options.client.userId, options.client.name, options.client.remote === false ? null : "RobloxMonitorClientErrors");

  const sdk = state.loadstring(bundleSdk(readSdkSources(root), SDK_VERSION), "=ReplicatedStorage.RobloxMonitor", true);
  await mock.bind(sdk, "ReplicatedStorage.RobloxMonitor", "ModuleScript");
  const [monitor] = (await sdk()) as [any];
  let chunks = 0;

  /** Runs Luau source as a server Script would (with `Monitor` in scope), until it finishes. */
  async function run(source: string, maxSeconds = 60): Promise<unknown> {
    return runScript(`local Monitor = ...\n${source}`, `ServerScriptService.Test${++chunks}`, monitor, maxSeconds);
  }

  /** Runs `source` as a Script at `path` with `arg` as `...`, advancing time until it is done. */
  async function runScript(source: string, path: string, arg: unknown, maxSeconds: number): Promise<unknown> {
    const chunk = state.loadstring(source, `=${path}`, true);
    await mock.bind(chunk, path);
    const [result] = (await mock.spawn(chunk, arg)) as [any];
    for (let waited = 0; !result.done; waited += 0.1) {
      if (waited > maxSeconds) throw new Error(`Luau code still running after ${maxSeconds} simulated seconds`);
      await mock.advance(0.1);
    }
    return result.value;
  }

  /**
   * An Actor at `actorPath`. Its scripts run in their own Luau VM, where requiring the module gives
   * a separate copy (its own module state, the same ModuleScript), as Roblox does: the bundle is
   * loaded again for it. `run` runs a Script under the Actor with that copy as `Monitor`.
   */
  async function actor(actorPath: string) {
    await mock.makeActor(actorPath);
    const copy = state.loadstring(bundleSdk(readSdkSources(root), SDK_VERSION), "=ReplicatedStorage.RobloxMonitor", true);
    await mock.bind(copy, "ReplicatedStorage.RobloxMonitor", "ModuleScript");
    const [copyMonitor] = (await copy()) as [any];
    let scripts = 0;
    return {
      monitor: copyMonitor,
      run: async (source: string, maxSeconds = 60): Promise<unknown> => {
        return runScript(`local Monitor = ...\n${source}`, `${actorPath}.Script${++scripts}`, copyMonitor, maxSeconds);
      },
    };
  }

  /**
   * Runs Luau source as a server Script would, with one SDK module (loaded on its own, with the
   * modules it requires) as `Module`: for checking a module's own contract, such as what it counts.
   */
  async function runModule(name: string, source: string, maxSeconds = 60): Promise<unknown> {
    const sources = readSdkSources(root);
    const chunk = state.loadstring(bundleSdk({ ...sources, init: `return require(script.${name})` }, SDK_VERSION), `=ReplicatedStorage.${name}`, true);
    await mock.bind(chunk, `ReplicatedStorage.${name}`, "ModuleScript");
    const [module] = (await chunk()) as [any];
    return runScript(`local Module = ...\n${source}`, `ServerScriptService.Test${++chunks}`, module, maxSeconds);
  }

  return {
    mock,
    monitor,
    actor,
    runModule,
    fired,
    requests,
    warnings,
    prints,
    threadErrors,
    run,
    /** Moves simulated time, running whatever falls due (and the requests it makes). */
    advance: async (seconds: number) => void (await mock.advance(seconds)),
    now: async () => ((await mock.now()) as [number])[0],
    /** Fires ScriptContext.Error `times` times in a row (one call into Luau for all of them). */
    fireError: async (message: string, stack: string, scriptPath?: string, times = 1) =>
      void (await mock.fireError(message, stack, scriptPath ?? null, times)),
    /** The client RemoteEvent reaching the server from `userId`, `times` times in a row. */
    fireRemote: async (userId: number, payload: unknown, times = 1) =>
      void (await mock.fireRemote("RobloxMonitorClientErrors", userId, JSON.stringify(payload ?? null), times)),
    addPlayer: async (userId: number, name: string) => void (await mock.addPlayer(userId, name)),
    /** The player leaving, with an `Enum.PlayerExitReason` name (default Unknown). */
    removePlayer: async (userId: number, exitReason?: ExitReason) =>
      void (await mock.removePlayer(userId, exitReason ?? null)),
    /** The watchdog stopping a script (its error reaches the Output only, not ScriptContext.Error). */
    scriptTimeout: async (scriptPath: string, line = 1) => void (await mock.scriptTimeout(scriptPath, line)),
    /** A line in the Output (LogService.MessageOut), with its type name and context dictionary. */
    messageOut: async (message: string, type: "MessageOutput" | "MessageInfo" | "MessageWarning" | "MessageError", context?: Record<string, unknown>) =>
      void (await mock.messageOut(message, type, context ?? null)),
    signalBehavior: (options.signalBehavior ?? defaultSignalBehavior()) as SignalBehavior,
    /** Delivers what this client fired to the server, as that player (luau-web runs one state at a time). */
    deliverTo: async (server: { mock: any }) => {
      if (!options.client) throw new Error("only a client delivers");
      // the client's frame ends first: handlers of the signals fired so far run (deferred), then it replicates
      await mock.advance(0);
      for (const { remote, payloadJson } of outbox.splice(0)) await server.mock.fireRemote(remote, options.client.userId, payloadJson);
    },
    /**
     * Shuts the server down as Roblox does (players leave, BindToClose callbacks, closed after at most 30 s).
     * `playersStay`: the players are still connected while the callbacks run (Roblox does not document the order).
     */
    shutdown: async (reason: CloseReason = "DeveloperShutdown", playersStay = false) => ((await mock.shutdown(reason, playersStay)) as [boolean])[0],
    /** The engine stopping the server without BindToClose (a crash): nothing runs any more. */
    crash: async () => void (await mock.crash()),
    /** Engine figures the Stats service and workspace report (see `statFigures` in roblox-mock.luau). */
    setStats: async (figures: Partial<StatFigures>) => void (await mock.setStats(JSON.stringify(figures))),
    /** A player's round-trip latency in seconds (Player:GetNetworkPing). */
    setPing: async (userId: number, seconds: number) => void (await mock.setPing(userId, seconds)),
    /** Data-store request budgets by Enum.DataStoreRequestType name. */
    setDataStoreBudget: async (budgets: Record<string, number>) => void (await mock.setDataStoreBudget(JSON.stringify(budgets))),
    /** Names of the RemoteEvents in ReplicatedStorage (what would replicate to clients). */
    remoteNames: async () =>
      ((await run(`local names = {} for _, c in game:GetService("ReplicatedStorage"):GetChildren() do if c.ClassName == "RemoteEvent" then table.insert(names, c.Name) end end return table.concat(names, ",")`)) as string)
        .split(",")
        .filter(Boolean),
  };
}

export type RobloxServer = Awaited<ReturnType<typeof createRobloxServer>>;
