-- The hello plugin's schema: every wave an app made, the change that the
-- hello.waved event reports. The migration runner makes the schema (the
-- plugin's role owns it but may not create schemas).

CREATE TABLE hello.waves (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id     text        NOT NULL,
    name       text        NOT NULL,
    event_id   text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
