// Sends `tries` POSTs of `bytes` bytes (a JSON event with a long message) with Node's fetch, in its
// own process, `parallel` at a time, and prints what each got: the status and error code, or the
// error that ended it.
const [url, apiKey, tries, bytes, parallel = "1"] = process.argv.slice(2);
const body = JSON.stringify({ errors: [{ message: "x".repeat(Number(bytes)) }] });
const outcomes = [];
let next = 0;
async function worker() {
  while (next < Number(tries)) {
    next++;
    try {
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-api-key": apiKey }, body });
      const json = await res.json().catch(() => ({}));
      outcomes.push(`${res.status} ${json.error}`);
    } catch (err) {
      outcomes.push(`failed: ${err.cause?.code ?? err.cause?.message ?? err.message}`);
    }
  }
}
await Promise.all(Array.from({ length: Number(parallel) }, worker));
console.log(JSON.stringify(outcomes));
