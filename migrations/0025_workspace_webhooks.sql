-- Webhooks of one workspace (docs/rest.md "Webhooks"): its admins create
-- them, and they fire only for experiments in that workspace's projects.
-- NULL is a cluster-wide webhook, which only cluster admins create. A
-- workspace's webhooks go with it when it is deleted.
ALTER TABLE webhooks ADD COLUMN workspace_id INTEGER;
CREATE INDEX webhooks_by_workspace ON webhooks (workspace_id);
