package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/worktree"
)

// newWorktreeCmd is `reins worktree list|merge|drop CHILD` (SPEC §12): the
// user's side of the isolated children's branches (docs/subagents.md),
// in the repository of the current folder (or --cwd). They work on what
// is in git, so they work after reins ended — or was killed.
func newWorktreeCmd(s *streams) *cobra.Command {
	var cwd string
	c := &cobra.Command{
		Use:   "worktree",
		Short: "List, merge or drop the work of isolated children (isolation: worktree)",
		Args:  cobra.NoArgs,
	}
	c.PersistentFlags().StringVar(&cwd, "cwd", "", "the repository's folder (default: the current one)")
	open := func(ctx context.Context) (*worktree.Repo, error) {
		dir := cwd
		if dir == "" {
			var err error
			if dir, err = os.Getwd(); err != nil {
				return nil, err
			}
		}
		// The config's sandbox policy: the repository's git runs
		// confined within it (docs/sandbox.md, "reins's own git").
		h, err := harness.New(harness.Options{Cwd: dir})
		if err != nil {
			return nil, err
		}
		h.Close()
		r, err := worktree.Open(ctx, dir, h.Sandbox)
		if err != nil {
			return nil, &exitError{Code: exitUsage, Msg: "worktree: " + err.Error()}
		}
		return r, nil
	}
	// onChild is the RunE of a command on the isolated child its one
	// argument (an id or a prefix of one) names in the repository.
	onChild := func(run func(ctx context.Context, r *worktree.Repo, id string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			r, err := open(ctx)
			if err != nil {
				return err
			}
			id, err := r.Resolve(ctx, args[0])
			if errors.Is(err, worktree.ErrNoChild) {
				return &exitError{Code: exitUsage, Msg: fmt.Sprintf("worktree: no isolated child %q in this repository (reins worktree list)", args[0])}
			}
			if err != nil {
				return &exitError{Code: exitUsage, Msg: "worktree: " + err.Error()}
			}
			return run(ctx, r, id)
		}
	}
	c.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the isolated children's branches, their worktrees, changes and merge state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := open(cmd.Context())
			if err != nil {
				return err
			}
			list, err := r.List(cmd.Context())
			if err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintln(s.out, "no isolated children in this repository")
				return nil
			}
			tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CHILD\tBRANCH\tCHANGE\tWORKTREE\tSTATE")
			for _, st := range list {
				where := "removed"
				if st.Dir != "" {
					where = termsafe.EscapeLine(st.Dir)
					if p, err := r.Pending(cmd.Context(), st.ID); err == nil && p {
						where += " (uncommitted changes)"
					}
				}
				state := "not merged"
				if st.Merged {
					state = "merged"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s +%d -%d\t%s\t%s\n", st.ID, st.Branch, files(st.Files), st.Added, st.Deleted, where, state)
			}
			return tw.Flush()
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "merge CHILD",
		Short: "Apply a child's work to the working tree (three-way; a conflict changes nothing)",
		Long: "Apply the child's branch to the working tree of the repository (not to its index), as a\n" +
			"three-way merge against the tree the child started from. Work still uncommitted in the\n" +
			"child's worktree (a run that was killed) is committed on its branch first. On a conflict\n" +
			"the conflicts are printed, nothing is changed, and the exit status is 1.",
		Args: cobra.ExactArgs(1),
		RunE: onChild(func(ctx context.Context, r *worktree.Repo, id string) error {
			if p, err := r.Pending(ctx, id); err == nil && p {
				if _, err := r.Commit(ctx, id, "work left in the worktree of "+id); err != nil {
					return err
				}
				fmt.Fprintf(s.err, "reins: committed the work left in %s's worktree first\n", id)
			}
			st, err := r.Merge(ctx, id)
			var ce *worktree.ConflictError
			if errors.As(err, &ce) {
				fmt.Fprintln(s.err, termsafe.Escape(ce.Text))
				return &exitError{Code: exitFailed, Msg: ce.Error()}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(s.out, "merged %s into the working tree (not staged): %s changed, +%d -%d\n", st.Branch, files(st.Files), st.Added, st.Deleted)
			return nil
		}),
	})
	c.AddCommand(&cobra.Command{
		Use:   "drop CHILD",
		Short: "Discard a child's work: its worktree and its branch are deleted",
		Args:  cobra.ExactArgs(1),
		RunE: onChild(func(ctx context.Context, r *worktree.Repo, id string) error {
			if err := r.Drop(ctx, id); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "dropped %s: its worktree and branch %s are deleted\n", id, worktree.Branch(id))
			return nil
		}),
	})
	return c
}

// files is "1 file" or "N files".
func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}
