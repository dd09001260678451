package io.betree.internal.txn;

import io.betree.internal.tree.BeTree;

/**
 * One write of a committing transaction.
 *
 * @param indexId the index's stable id (logged)
 * @param tree the index's tree
 * @param type {@code MessageType.PUT} or {@code MessageType.DELETE}
 * @param key the key
 * @param value the value, or {@code null} for a delete
 */
public record WriteOp(int indexId, BeTree tree, byte type, byte[] key, byte[] value) {
}
