/** Where a test run records the API's answers for the contract audit, and what one record holds. */
import os from "node:os";
import path from "node:path";

export type RecordedResponse = {
  method: string;
  /** The request's path as sent (percent-encoded), without the query. */
  path: string;
  status: number;
  contentType: string | null;
  /** The body's text, for a JSON answer. */
  body?: string;
  /** A JSON answer whose body could not be read (the connection was cut). */
  unread?: true;
};

/** The run's directory of recordings (one JSONL file per test worker). */
export const contractRecordDir = (runId: string) => path.join(os.tmpdir(), `rbx-monitor-contract-${runId}`);

export const contractRecordFile = (runId: string, pid: number) => path.join(contractRecordDir(runId), `responses-${pid}.jsonl`);
