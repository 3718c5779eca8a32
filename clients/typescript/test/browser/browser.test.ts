/**
 * The web client in a real browser: headless Chromium (Debian's, /usr/bin/chromium, driven by
 * playwright-core) loads test/browser/index.html from a static server of this test and plays a
 * whole game through hearts-gateway, over gRPC-Web and over Connect. The page's origin
 * (HEARTS_GATEWAY_PAGE_ORIGIN, a free loopback port that the gateway allows) is not the
 * gateway's, so every call goes through the browser's CORS checks and preflights; the same page
 * served from another port, which the gateway does not allow, must be refused.
 *
 * Run it through deploy/gateway/with-gateway.sh, which sets HEARTS_GATEWAY and
 * HEARTS_GATEWAY_PAGE_ORIGIN: `with-gateway.sh npm --prefix clients/typescript run test:browser`.
 * HEARTS_CHROMIUM overrides the browser's path; HEARTS_TEST_SEED replays a game.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { type Browser, type ConsoleMessage, chromium } from "playwright-core";

/** How long one page may take to play its game and write #result. */
const PAGE_TIMEOUT_MS = 60_000;
const PROTOCOLS = ["grpc-web", "connect"] as const;

function env(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set; run the test via deploy/gateway/with-gateway.sh`);
  }
  return value;
}

const gateway = `http://${env("HEARTS_GATEWAY")}`;
const allowedOrigin = env("HEARTS_GATEWAY_PAGE_ORIGIN");
const chromiumPath = process.env["HEARTS_CHROMIUM"] ?? "/usr/bin/chromium";

// The package's root, from dist/test/browser/: the page and its bundle (npm run bundle:browser).
const root = new URL("../../../", import.meta.url);
const files: Record<string, { file: URL; type: string }> = {
  "/": { file: new URL("test/browser/index.html", root), type: "text/html; charset=utf-8" },
  "/page.js": { file: new URL("dist/browser/page.js", root), type: "text/javascript; charset=utf-8" },
  "/page.js.map": { file: new URL("dist/browser/page.js.map", root), type: "application/json" },
};

/** A static server of the page on 127.0.0.1:port (0: a free one); resolves to its origin. */
async function servePage(port: number): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://page").pathname;
    const entry = files[path];
    if (request.method !== "GET" || entry === undefined) {
      response.writeHead(404).end();
      return;
    }
    readFile(entry.file).then(
      (body) => response.writeHead(200, { "content-type": entry.type, "cache-control": "no-store" }).end(body),
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let browser: Browser;
const servers: Server[] = [];
let deniedOrigin: string;

before(async () => {
  assert.ok(existsSync(chromiumPath), `no browser at ${chromiumPath}: apt-get install chromium (or set HEARTS_CHROMIUM)`);
  const allowed = new URL(allowedOrigin);
  assert.equal(allowed.hostname, "127.0.0.1", "HEARTS_GATEWAY_PAGE_ORIGIN is a loopback origin");
  servers.push((await servePage(Number(allowed.port))).server);
  const denied = await servePage(0); // another port: another origin, which the gateway does not allow
  servers.push(denied.server);
  deniedOrigin = denied.origin;
  // Playwright passes --no-sandbox (chromiumSandbox defaults to false), which root needs.
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, timeout: 30_000 });
});

after(async () => {
  await browser?.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

interface PageRun {
  result: Record<string, unknown>;
  console: string[];
  /** The Access-Control-Allow-Origin of each response the gateway sent the page. */
  allowOrigins: (string | undefined)[];
}

/** Loads the page from `origin`, waits for its #result and returns it with the console's lines. */
async function runPage(origin: string, protocol: string): Promise<PageRun> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const lines: string[] = [];
    const allowOrigins: (string | undefined)[] = [];
    page.on("console", (message: ConsoleMessage) => lines.push(`${message.type()}: ${message.text()}`));
    page.on("pageerror", (error) => lines.push(`pageerror: ${error.message}`));
    page.on("response", (response) => {
      if (response.url().startsWith(`${gateway}/`)) {
        allowOrigins.push(response.headers()["access-control-allow-origin"]);
      }
    });
    const query = new URLSearchParams({ gateway, protocol });
    const seed = process.env["HEARTS_TEST_SEED"];
    if (seed) query.set("seed", seed);
    await page.goto(`${origin}/?${query}`, { timeout: 10_000 });
    const result = page.locator('#result[data-state="done"]');
    try {
      await result.waitFor({ timeout: PAGE_TIMEOUT_MS });
    } catch (error) {
      throw new Error(`no result within ${PAGE_TIMEOUT_MS} ms; console:\n${lines.join("\n")}`, { cause: error });
    }
    return { result: JSON.parse(await result.innerText()) as Record<string, unknown>, console: lines, allowOrigins };
  } finally {
    await context.close();
  }
}

for (const protocol of PROTOCOLS) {
  test(`${protocol}: a page on an allowed origin plays a whole game in Chromium`, { timeout: PAGE_TIMEOUT_MS + 30_000 }, async (t) => {
    const run = await runPage(allowedOrigin, protocol);
    t.diagnostic(JSON.stringify(run.result));
    assert.equal(run.result["ok"], true, `the page failed: ${JSON.stringify(run.result)}\n${run.console.join("\n")}`);
    assert.equal(run.result["protocol"], protocol);
    const tricks = run.result["tricks"] as number;
    assert.ok(tricks >= 13 && tricks % 13 === 0, `${tricks} tricks`);
    assert.equal(tricks, (run.result["rounds"] as number) * 13);
    assert.match(String(run.result["reason"]), /^[A-Z_]+$/, "the refused move's reason");
    assert.deepEqual(run.result["forged"], ["Unauthenticated/TOKEN_INVALID", "Unauthenticated/TOKEN_INVALID"]);
    // The calls crossed origins: the gateway answered them with CORS headers for the page.
    assert.ok(run.allowOrigins.length > 0, "the page's calls reached the gateway");
    assert.deepEqual(new Set(run.allowOrigins), new Set([allowedOrigin]), "Access-Control-Allow-Origin");
  });
}

for (const protocol of PROTOCOLS) {
  test(`${protocol}: a page on an origin the gateway does not allow is refused by CORS`, { timeout: 60_000 }, async (t) => {
    const run = await runPage(deniedOrigin, protocol);
    t.diagnostic(JSON.stringify(run.result));
    assert.equal(run.result["ok"], false, "the page's calls must fail");
    assert.equal(run.result["stage"], "CreateTable", "the first call already fails");
    // Connect reports a fetch that the browser refused as a network error (TypeError).
    assert.equal(run.result["reason"], undefined, "no answer of the server reached the page");
    const refusal = run.console.find((line) => line.includes("blocked by CORS policy"));
    assert.ok(refusal, `Chromium names CORS as the cause; console:\n${run.console.join("\n")}`);
    assert.ok(refusal.includes(`origin '${deniedOrigin}'`), refusal);
    t.diagnostic(refusal);
  });
}
