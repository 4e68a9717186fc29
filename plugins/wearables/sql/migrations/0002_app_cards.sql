-- The wearables portal reads an app's cards, newest first (ListAppCards,
-- ListAppDevices).
CREATE INDEX cards_app ON wearables.cards (app_id, id);
