/**
 * Transactions: timestamps and snapshots (MVCC), first-committer-wins conflict checks over a table of
 * recently written keys, and the commit path that logs a commit and then applies it to the trees.
 */
package io.betree.internal.txn;
