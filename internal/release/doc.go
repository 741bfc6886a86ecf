// Package release holds the test of scripts/release (README.md,
// "Install"): it builds this machine's platform, packs the npm packages,
// installs them offline into a fresh prefix and runs the installed reins.
// The package has no code of its own: the release is a script, the npm
// launcher lives in packaging/npm.
package release
