-- Learned templates (issue 40, app/ingest/miner.server.ts): per code location, the word positions of
-- a message template that vary are learned as variables, and the issues a learned template covers
-- become one.
--
-- Each issue keeps what the miner works on, written by the group upsert when the row is made: its
-- grouping location (a hash of the grouping key without the template: the frames' identities, the
-- leading script location, or none) and its message template. '' marks an issue that default grouping
-- did not make (a client fingerprint): nothing to learn from. Issues from before this migration start
-- with null and are filled from their latest stored event by the learning job (jobs/grouping-learn.ts);
-- the partial index finds them.
alter table error_groups add column grouping_location text, add column grouping_template text;
create index error_groups_grouping_pending on error_groups (project_id, id) where grouping_template is null;
create index error_groups_grouping_location on error_groups (project_id, grouping_location) where grouping_template <> '';

-- A learned template: its fingerprint (a hash of location and template, the same in every instance)
-- is an alias of its issue (group_id: the oldest issue it covered when it was learned), which the other
-- covered issues were merged into. Samples: per learned position, a few of the values seen (bounded).
-- merged_ids: the issues the learning merged into it, so an issue a studio unmerged is not merged again.
create table grouping_templates (
  project_id uuid not null references projects (id) on delete cascade,
  fingerprint text not null,
  location text not null,
  template text not null,
  token_count int not null,
  group_id uuid not null,
  positions int[] not null,
  samples jsonb not null,
  covered_texts int not null,
  covered_groups int not null,
  merged_ids uuid[] not null default '{}',
  learned_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (project_id, fingerprint),
  foreign key (project_id, group_id) references error_groups (project_id, id) on delete cascade
);
create index grouping_templates_group on grouping_templates (project_id, group_id);
