-- Granular consent (CONTRACT §17): the Pages a person chose for an app on
-- the consent page live on the consent, so every token of the grant
-- follows the choice, also when the person changes it later without
-- revoking the app. NULL: no choice was made (no Page scope was asked, a
-- consent remembered before the choice existed, a development token), and
-- the token acts on every Page its user holds a role on, as before; an
-- empty array: the person chose no Page; choosing every Page is stored as
-- NULL, so Pages made later are the app's too. Authenticating a token reads it
-- in the same query as the credential (LookupCredential).
ALTER TABLE core.oauth_consents ADD COLUMN page_ids bigint[];

-- A Page scope is one some Page-scoped method of its plugin needs (the
-- gateway derives it from the plugin's access rules when it records the
-- scope): the consent page asks for Pages when one is asked, and
-- debug_token lists its granular_scopes.
ALTER TABLE core.plugin_scopes ADD COLUMN pages boolean NOT NULL DEFAULT false;
