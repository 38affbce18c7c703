// Package markup parses the Markdown an LLM writes once, with goldmark, and
// renders it for each chat platform, split to fit the platform's message limit.
//
// Every platform goes through the same three stages:
//
//  1. parse: goldmark, with its GFM table and task list extensions, turns
//     the Markdown into an AST (parse.go);
//  2. layout: the AST becomes blocks of platform-neutral pieces — literal
//     text plus the start and end of spans such as bold, link or code block —
//     following the nesting rules the chat platforms share (layout.go);
//  3. spell and split: a dialect spells the pieces in one platform's syntax
//     (telegram.go, plain.go) and the splitter packs the spelled blocks into
//     parts that fit the limit, closing every open span at the end of a part
//     and reopening it at the start of the next (split.go).
//
// A new platform (Slack mrkdwn, Discord Markdown) adds a dialect; the parser,
// the layout and the splitter stay shared.
package markup
