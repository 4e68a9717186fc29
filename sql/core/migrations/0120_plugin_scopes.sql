-- OAuth scopes declared by plugins (issue 27): the gateway's catalog is its
-- own scopes (package identity) and these. A row is written when a plugin's
-- route table is built and is never removed by a plugin going away, so a
-- scope does not flap while its plugin restarts and is known to every
-- gateway of the installation; grants and tokens already issued for it
-- stay valid whatever happens to the plugin.
CREATE TABLE core.plugin_scopes (
    name        text PRIMARY KEY,
    plugin      text NOT NULL,
    description text NOT NULL,
    review      text NOT NULL CHECK (review IN ('basic', 'advanced')),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
