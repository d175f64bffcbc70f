-- Email alert channels (SMTP): a channel of kind 'email' sends to its recipients through the SMTP
-- server the operator configures (SMTP_URL, SMTP_FROM); it has no URL to seal. Every other kind keeps
-- its sealed URL and has no recipients.
alter table alert_channels drop constraint alert_channels_kind_check;
alter table alert_channels add constraint alert_channels_kind_check check (kind in ('discord', 'slack', 'webhook', 'email'));
alter table alert_channels add column recipients text[] not null default '{}';
alter table alert_channels alter column url_sealed drop not null, alter column url_hint drop not null;
alter table alert_channels add constraint alert_channels_target_check check (
  case when kind = 'email'
    then url_sealed is null and url_hint is null and cardinality(recipients) between 1 and 20
    else url_sealed is not null and url_hint is not null and cardinality(recipients) = 0
  end);
