// Command chat is the consumer chat app's plugin (CONTRACT §5): direct
// messages between users (POST /api/mobile/chat/messages) and the merged
// chats list (GET /api/mobile/chat), which shows the user's direct threads
// beside the Page threads of the svcchat inbox and a sponsored item.
//
// It owns the chat schema. Direct messages belong to no Page and no app:
// no Graph node, app or webhook ever sees them, and this plugin emits no
// events. The Page threads are asked of the svcchat plugin through the
// plugin host, as the signed-in user (svcchat's Inbox method), so the two
// stores stay apart and the inbox's visibility rules are applied once.
//
// The sponsored item is the ads plugin's: the chats list asks its
// ServeSponsoredAd through the host as the signed-in user, which picks the
// ad and counts the impression; without an answer the slot is empty.
package main
