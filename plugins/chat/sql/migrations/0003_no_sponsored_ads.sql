-- The sponsored item of the chats list is the ads plugin's to choose and
-- count (ServeSponsoredAd, asked through the host): the development seed's
-- one hard-coded row became a campaign made through the API.
DROP TABLE chat.sponsored_ads;
