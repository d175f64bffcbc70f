/**
 * The benchmark's reference for API dispatch: plain Express answering the health check's body on
 * one route, with nothing else. Started as a child process on the port given as the argument.
 */
import express from "express";

const app = express();
app.disable("x-powered-by");
app.get("/api/ingest", (_req, res) => {
  res.set("cache-control", "no-store").json({ status: "ok" });
});
app.listen(Number(process.argv[2]), "127.0.0.1", () => console.log("listening"));
