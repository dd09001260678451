/**
 * Where a transaction's pending writes go when they outgrow their share of the heap: sorted runs in a
 * temporary file under the environment's directory ({@link SpillFile}), looked up and scanned for
 * the transaction's own reads ({@link SpilledWrites}) and merged, newest write of a key winning, into
 * one run the commit streams into the log and the trees ({@link CommitRun}). The files are private
 * to one process and one transaction; a crash leaves them behind and the next open deletes them.
 */
package io.betree.internal.txn.spill;
