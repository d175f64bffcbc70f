-- The pending counters' payload (db/counter-deltas.ts) is one JSON value per batch and project, tens
-- to hundreds of KB for a batch of thousands of events, written once and read once by the drain.
-- TOAST compressed it with pglz, ~3.5% of the database's CPU under bench:write; lz4 compresses such
-- text several times faster. A server built without lz4 keeps pglz.
do $$
begin
  alter table counter_deltas alter column payload set compression lz4;
exception when feature_not_supported or invalid_parameter_value then
  null;
end $$;
