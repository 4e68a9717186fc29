// Package msgtemplate is the message-template review lifecycle that every
// product with business message templates shares (svcchat's app templates,
// extmsg's business templates; interface §3.1, CONTRACT §5): the statuses,
// the one transition table and the template body grammar ({{param}}
// placeholders). It holds no storage and no wire types: a plugin keeps its
// templates in its own schema and asks Next what a step does.
package msgtemplate
