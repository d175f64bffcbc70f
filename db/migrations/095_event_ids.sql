-- The id a client gave an event (native `event_id`, Sentry's `event_id`), so the id a game's
-- `captureException` returned can be found on the stored event. Nullable with no default: adding it
-- to the partitioned table changes only the catalog, and no index is kept on it (the ingest path
-- writes every stored row; looking an id up reads one issue's events, or filters a scan).
alter table events add column event_id uuid;
