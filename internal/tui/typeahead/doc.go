// Package typeahead is what the terminal holds that was typed and not
// read yet: Flush discards it (an approval question comes to the front
// and no key typed before it may answer it), Pending tells whether there
// is any (the folder question at launch waits while a prompt typed as
// reins started is still coming in). Each returns the function the screen
// calls, bound to the terminal's file descriptor.
package typeahead
