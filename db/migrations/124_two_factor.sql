-- Two-factor authentication (TOTP, RFC 6238) for password accounts, and a per-project requirement.
-- The TOTP secret is sealed (AES-256-GCM under a key derived from APP_SECRET, the user id as
-- associated data); a row with enabled_at null is an enrollment not yet confirmed with a code.
-- last_used_step is the last 30-second step a code was accepted for: a code of that step or an
-- earlier one is refused, so a code seen over someone's shoulder cannot be used again.
create table user_two_factor (
  user_id uuid primary key references users (id) on delete cascade,
  secret_ciphertext bytea not null,
  secret_iv bytea not null,
  secret_tag bytea not null,
  enabled_at timestamptz,
  last_used_step bigint,
  created_at timestamptz not null default now()
);

-- Single-use recovery codes, stored as an HMAC under a key derived from APP_SECRET (a database
-- leak alone yields no code); used_at marks a spent one.
create table user_recovery_codes (
  user_id uuid not null references users (id) on delete cascade,
  code_hash bytea not null,
  used_at timestamptz,
  primary key (user_id, code_hash)
);

-- Which roles must have two-factor turned on to use the project: nobody, owners and admins, everyone.
alter table projects add column two_factor_required text not null default 'off'
  check (two_factor_required in ('off', 'owners_admins', 'everyone'));
