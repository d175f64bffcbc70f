// Sends `tries` POSTs of `bytes` bytes (a JSON event with a long message) one after another with
// Node's fetch, in its own process, and prints what each got: the status, or the error code.
const [url, apiKey, tries, bytes] = process.argv.slice(2);
const body = JSON.stringify({ errors: [{ message: "x".repeat(Number(bytes)) }] });
const outcomes = [];
for (let i = 0; i < Number(tries); i++) {
  try {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-api-key": apiKey }, body });
    const json = await res.json().catch(() => ({}));
    outcomes.push(`${res.status} ${json.error}`);
  } catch (err) {
    outcomes.push(`failed: ${err.cause?.code ?? err.cause?.message ?? err.message}`);
  }
}
console.log(JSON.stringify(outcomes));
