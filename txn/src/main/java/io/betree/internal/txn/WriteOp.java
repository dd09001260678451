package io.betree.internal.txn;

import io.betree.internal.log.CommitRecord;
import io.betree.internal.log.LoggedWrite;
import io.betree.internal.tree.BeTree;
import io.betree.internal.tree.MessageType;
import io.betree.internal.tree.TreeWrite;
import java.util.Objects;

/**
 * One write of a committing transaction: what is logged and then applied to the index's tree.
 *
 * @param indexId the index's stable id (logged)
 * @param tree the index's tree
 * @param type the tree message ({@link MessageType#PUT} or {@link MessageType#DELETE})
 * @param key the key
 * @param value the value, or {@code null} for a delete
 */
public record WriteOp(int indexId, BeTree tree, byte type, byte[] key, byte[] value) implements TreeWrite, LoggedWrite {

    /** Checks the key is present and the type is one the log can record. */
    public WriteOp {
        Objects.requireNonNull(key, "key");
        if (type != MessageType.PUT && type != MessageType.DELETE) {
            throw new IllegalArgumentException("unknown write type " + type);
        }
    }

    /** A put of {@code value} under {@code key}. The arrays are not copied. */
    public static WriteOp put(int indexId, BeTree tree, byte[] key, byte[] value) {
        return new WriteOp(indexId, tree, MessageType.PUT, key, Objects.requireNonNull(value, "value"));
    }

    /** A delete of {@code key}. The array is not copied. */
    public static WriteOp delete(int indexId, BeTree tree, byte[] key) {
        return new WriteOp(indexId, tree, MessageType.DELETE, key, null);
    }

    /** The log's op code for the write. */
    @Override
    public byte opCode() {
        return type == MessageType.PUT ? CommitRecord.PUT : CommitRecord.DELETE;
    }

    /**
     * The write a logged op stands for, applied to {@code tree}.
     *
     * @throws IllegalArgumentException if the op code is unknown or a put has no value
     */
    public static WriteOp replayed(CommitRecord.Op op, BeTree tree) {
        switch (op.type()) {
            case CommitRecord.PUT:
                if (op.value() == null) {
                    throw new IllegalArgumentException("a put without a value for index " + op.indexId());
                }
                return put(op.indexId(), tree, op.key(), op.value());
            case CommitRecord.DELETE:
                return delete(op.indexId(), tree, op.key());
            default:
                throw new IllegalArgumentException("unknown op code " + op.type() + " for index " + op.indexId());
        }
    }
}
