-- Assignment, comments and the activity timeline of an issue (docs/api.md#collaboration).
--
-- Nothing here is written by ingest: the timeline derives what ingest knows (first seen, the latest
-- regression, alerts sent) from the columns and tables that already hold it, and rows are written
-- only for what people do (status changes, merges, assignments, comments), in the transaction that
-- does it.

-- The assignee must be a member of the issue's project: the foreign key is the guarantee (removing a
-- member clears it, which db/members.ts does first so the timeline records it). Ingest never writes
-- this column, so the index does not cost the per-occurrence updates their HOT path.
alter table error_groups add column assignee_id uuid;
alter table error_groups add constraint error_groups_assignee
  foreign key (project_id, assignee_id) references project_members (project_id, user_id) on delete set null (assignee_id);
create index error_groups_assignee on error_groups (project_id, assignee_id) where assignee_id is not null;

-- What people did to an issue. `details` holds what the kind needs to be told (see db/activity.ts).
create table issue_activity (
  project_id uuid not null,
  id bigint generated always as identity,
  group_id uuid not null,
  -- null: the product did it (a snooze ran out, a share link's editor, a removed member's issues)
  actor_id uuid references users (id) on delete set null,
  kind text not null check (kind in ('status', 'assigned', 'merged', 'unmerged')),
  details jsonb not null default '{}',
  created_at timestamptz not null default now(),
  primary key (project_id, id),
  foreign key (project_id, group_id) references error_groups (project_id, id) on delete cascade
);
create index issue_activity_group on issue_activity (project_id, group_id, created_at);

-- Members' comments: plain text, shown as typed (links made clickable when shown).
create table issue_comments (
  project_id uuid not null,
  id uuid not null default gen_random_uuid(),
  group_id uuid not null,
  author_id uuid references users (id) on delete set null,
  body text not null check (length(body) between 1 and 5000),
  created_at timestamptz not null default now(),
  edited_at timestamptz,
  primary key (project_id, id),
  foreign key (project_id, group_id) references error_groups (project_id, id) on delete cascade
);
create index issue_comments_group on issue_comments (project_id, group_id, created_at);

-- "Assigned to you": one row per assignment of an issue to someone by someone else; read when the
-- notifications page or the issue is opened.
create table assignment_notices (
  project_id uuid not null,
  id bigint generated always as identity,
  group_id uuid not null,
  user_id uuid not null references users (id) on delete cascade,
  actor_id uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  read_at timestamptz,
  primary key (project_id, id),
  foreign key (project_id, group_id) references error_groups (project_id, id) on delete cascade
);
create index assignment_notices_user on assignment_notices (user_id, created_at desc);
create index assignment_notices_group on assignment_notices (project_id, group_id);

-- Who revoked a share link (null: revoked with its creator's membership, or before this column).
alter table share_links add column revoked_by uuid references users (id) on delete set null;

-- The alerts sent about one issue, for its timeline (the delivery log reads by project and time).
create index alert_deliveries_group on alert_deliveries (project_id, group_id, created_at) where group_id is not null;
