-- What happened before an event (Output lines, breadcrumbs a game or a Sentry SDK recorded), kept
-- with the raw event in its own column rather than inside `context`: it has its own size bound, it
-- stays out of the context tag breakdown, and a page that shows context can leave it out (share
-- pages do). Nullable without a default: adding it rewrites no partition, and an event without
-- breadcrumbs stores nothing more than before. Not indexed: it is read only with its event.
alter table events add column breadcrumbs jsonb;
