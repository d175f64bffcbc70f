-- Grouping rules per project (docs/grouping.md, "Grouping rules"): an ordered list of up to 100
-- rules, each a match (exact message, message regex, script path prefix, level, tag; all given must
-- hold) and an action: `group` (every matching event goes to one issue per rule, whose fingerprint is
-- stored here so the issue can be found and titled) or `ignore` (never stored nor counted on an
-- issue; counted per rule and day below). Positions are 0..n-1 without gaps, kept so by the writes
-- under the project's grouping-rules lock (db/grouping-rules.ts).
create table grouping_rules (
  project_id uuid not null references projects (id) on delete cascade,
  id uuid not null,
  position int not null check (position >= 0),
  name text,
  match jsonb not null,
  action text not null check (action in ('group', 'ignore')),
  fingerprint text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (project_id, id)
);
create index grouping_rules_position on grouping_rules (project_id, position);
create unique index grouping_rules_fingerprint on grouping_rules (project_id, fingerprint);

-- Events an ignore rule dropped, per rule and UTC day (the ingest adds to them after its write).
create table grouping_rule_hits (
  project_id uuid not null,
  rule_id uuid not null,
  day date not null,
  hits bigint not null,
  last_hit timestamptz not null,
  primary key (project_id, rule_id, day),
  foreign key (project_id, rule_id) references grouping_rules (project_id, id) on delete cascade
);

-- A `group` rule with a name titles its issue: set by the application after the write that made the
-- issue (once per instance) and when the rule is renamed or applied; null everywhere else (the title is
-- then the message's template, as before). No trigger: the group upsert runs for every write, and
-- only projects with named rules should pay for them.
alter table error_groups add column title text;
