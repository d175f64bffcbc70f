-- Sign-in with OpenID Connect. An identity is the provider's (issuer, subject) pair, linked to one
-- account; the provider's id (OIDC_PROVIDERS) is kept for display and may be renamed without
-- breaking links. Deleting the account deletes its identities.
create table user_identities (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  provider text not null check (length(provider) between 1 and 40),
  issuer text not null check (length(issuer) between 1 and 2000),
  subject text not null check (length(subject) between 1 and 255),
  -- what the provider called the person at the last sign-in (display only, never trusted for access)
  username text check (length(username) <= 320),
  email text check (length(email) <= 320),
  created_at timestamptz not null default now(),
  last_sign_in_at timestamptz,
  unique (issuer, subject)
);
create index user_identities_user on user_identities (user_id);

-- false for an account created by an OIDC sign-in: its stored hash is of a password nobody knows,
-- so it may not unlink its last identity
alter table users add column has_password boolean not null default true;

-- A sign-in or link started at a provider: one row per authorization request, deleted when its
-- callback arrives (a replayed state finds nothing). The state itself is kept only as its SHA-256.
create table oidc_flows (
  state_hash bytea primary key,
  provider text not null,
  intent text not null check (intent in ('login', 'link')),
  -- the signed-in account a link is for
  user_id uuid references users (id) on delete cascade,
  nonce text not null,
  next text not null,
  expires_at timestamptz not null
);
create index oidc_flows_expiry on oidc_flows (expires_at);
