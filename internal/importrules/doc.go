// Package importrules holds no code: its test keeps the picture of the
// module true. Leaves stay leaves (the result contract, the pi wrapper,
// config, session, the agent loop, the public SDK import no delegation
// runtime, MCP client or sandbox they do not need), nothing imports cmd,
// and the README's layout list names exactly the module's package folders.
package importrules
