-- An app's client secret, which also signs its webhooks, has one home:
-- core.apps (client_secret_sealed, previous_secret_sealed, migration 0030),
-- which identity writes and the webhook dispatcher reads (issue 27 item 6).
-- core.webhook_app_secrets (0020) kept a second sealed copy for webhook
-- signing, needed only by apps created before 0030 sealed the secret in
-- core.apps; those copies move there, and the table goes.
--
-- A moved copy stays sealed as it was, under the context "webhook signing
-- secret of app <id>" rather than "client secret of app <id>" (both bind it
-- to its app): package identity opens either (identity.OpenClientSecret).
-- Where core.apps already holds a sealed secret it is the current one (it
-- is what webhooks were signed with), and the copy is dropped.
UPDATE core.apps a
SET client_secret_sealed = k.sealed
FROM core.webhook_app_secrets k
WHERE k.app_id = a.id AND a.client_secret_sealed IS NULL;

DROP TABLE core.webhook_app_secrets;
