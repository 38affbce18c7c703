// Package sessions is the tool family that reaches other conversations:
// sessions_list, sessions_history and sessions_send look into and post to
// the agent's stored sessions, session_status reports on the current one,
// and message and create_forum_topic post to other chats the agent serves
// through a Messenger.
package sessions
