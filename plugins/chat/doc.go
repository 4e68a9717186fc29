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
// When the gateway seeds its development world it passes SVC_DEV_SEED=1,
// and the plugin adds one active sponsored item if the table is empty.
package main
