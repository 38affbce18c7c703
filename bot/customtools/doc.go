// Package customtools is the custom-tools feature: shell-command tools an
// admin defines at run time, without a restart.
//
// It owns the Store that keeps them (storage/postgres implements it, the
// env values sealed), the Catalog that checks, stores and installs a tool
// and removes one, and the /tools chat command (Commands). /tools and the
// admin API's /api/v1/custom-tools add and remove through the same Catalog
// methods, so a tool is checked and installed one way whoever adds it.
// Tools from the config file are not in the Store; the config is their
// source.
//
// cmd/switchboard builds the Catalog on the store and the agents' tool
// registry, passes Commands(catalog) to bot.Router.Register and hands the
// Catalog to the admin API. Imports flow one way: customtools imports bot,
// channels and tools/exec; bot never imports customtools.
package customtools
