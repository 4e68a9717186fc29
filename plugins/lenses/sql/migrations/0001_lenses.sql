-- The migration runner makes the schema: the plugin's role owns it but may
-- not create schemas. An earlier text of this file made it too; a database
-- that applied that text is current:
-- migrate:replaces b7eb8636bb60922f7fd4c06a65b42975ebd894d9cfbc4eaa535092e373ea12f0
-- The lenses plugin's schema: the camera lenses the chat app offers. Lenses
-- belong to the platform, not to a Page or a user.

CREATE TABLE lenses.lenses (
    id         text        PRIMARY KEY,
    name       text        NOT NULL,
    icon_url   text        NOT NULL,
    position   integer     NOT NULL,
    active     boolean     NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- The built-in lenses; icons are small inline SVGs.
INSERT INTO lenses.lenses (id, name, icon_url, position) VALUES
    ('1001', 'Sunny', 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 24 24%22%3E%3Ccircle cx=%2212%22 cy=%2212%22 r=%226%22 fill=%22%23f5b400%22/%3E%3C/svg%3E', 1),
    ('1002', 'Ocean', 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 24 24%22%3E%3Crect width=%2224%22 height=%2212%22 y=%2212%22 fill=%22%231a73e8%22/%3E%3C/svg%3E', 2),
    ('1003', 'Mono', 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 24 24%22%3E%3Ccircle cx=%2212%22 cy=%2212%22 r=%229%22 fill=%22%23555%22/%3E%3C/svg%3E', 3);
