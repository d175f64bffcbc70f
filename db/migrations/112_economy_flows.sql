-- Flows are raw data kept for RETENTION_DAYS like events (economy_flow_daily and the unexplained gains
-- stay): the retention job finds the expired ones by their time of receipt.
create index economy_flows_received on economy_flows (received_at);
