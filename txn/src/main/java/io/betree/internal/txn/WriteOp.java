package io.betree.internal.txn;

import io.betree.internal.log.CommitRecord;
import io.betree.internal.log.LoggedWrite;
import io.betree.internal.tree.BeTree;
import io.betree.internal.tree.MessageType;
import io.betree.internal.tree.RangeMessage;
import io.betree.internal.tree.TreeWrite;
import io.betree.internal.tree.UpdateList;
import java.util.Objects;

/**
 * One write of a committing transaction: what is logged and then applied to the index's tree.
 *
 * @param indexId the index's stable id (logged)
 * @param tree the index's tree
 * @param type the tree message ({@link MessageType#PUT}, {@link MessageType#DELETE},
 *     {@link MessageType#UPDATE}, {@link MessageType#RANGE_UPDATE}, {@link MessageType#RANGE_DELETE}
 *     or {@link MessageType#PUT_EXPIRING})
 * @param key the key; of a range message, the range's lower bound (empty: none)
 * @param value the value, or {@code null} for a delete; for an update, its {@link UpdateList}; for a
 *     range message, its upper bound and update list ({@link RangeMessage#encodeValue}); for an
 *     expiring put, its {@link io.betree.internal.tree.Expiry} stored form
 */
public record WriteOp(int indexId, BeTree tree, byte type, byte[] key, byte[] value) implements TreeWrite, LoggedWrite {

    /**
     * Checks the key is present, the type is one the log can record, and a range message is well
     * formed (not empty, its list well formed): what is logged must replay.
     */
    public WriteOp {
        Objects.requireNonNull(key, "key");
        if (!MessageType.isKnown(type)) {
            throw new IllegalArgumentException("unknown write type " + type);
        }
        if (MessageType.isRange(type)) {
            RangeMessage.of(type, 0, 0, key, Objects.requireNonNull(value, "value"));
        }
    }

    /** A put of {@code value} under {@code key}. The arrays are not copied. */
    public static WriteOp put(int indexId, BeTree tree, byte[] key, byte[] value) {
        return new WriteOp(indexId, tree, MessageType.PUT, key, Objects.requireNonNull(value, "value"));
    }

    /**
     * A put of a value that expires: {@code stored} is its {@link io.betree.internal.tree.Expiry}
     * stored form. The arrays are not copied.
     */
    public static WriteOp putExpiring(int indexId, BeTree tree, byte[] key, byte[] stored) {
        if (stored.length < io.betree.internal.tree.Expiry.BYTES) {
            throw new IllegalArgumentException("an expiring put needs its expiry");
        }
        return new WriteOp(indexId, tree, MessageType.PUT_EXPIRING, key, stored);
    }

    /** A delete of {@code key}. The array is not copied. */
    public static WriteOp delete(int indexId, BeTree tree, byte[] key) {
        return new WriteOp(indexId, tree, MessageType.DELETE, key, null);
    }

    /** An update of {@code key} by the calls of {@code updateList} ({@link UpdateList}). The arrays are not copied. */
    public static WriteOp update(int indexId, BeTree tree, byte[] key, byte[] updateList) {
        return new WriteOp(indexId, tree, MessageType.UPDATE, key, Objects.requireNonNull(updateList, "updateList"));
    }

    /**
     * A delete of every key in {@code [lower, upper)} ({@code lower} empty, {@code upper} null: no
     * bound on that side). The arrays are not copied.
     */
    public static WriteOp rangeDelete(int indexId, BeTree tree, byte[] lower, byte[] upper) {
        return new WriteOp(indexId, tree, MessageType.RANGE_DELETE, lower, RangeMessage.encodeValue(upper, null));
    }

    /** An update of every key present in the index by the calls of {@code updateList} (a broadcast). */
    public static WriteOp broadcast(int indexId, BeTree tree, byte[] updateList) {
        return new WriteOp(indexId, tree, MessageType.RANGE_UPDATE, new byte[0],
                RangeMessage.encodeValue(null, Objects.requireNonNull(updateList, "updateList")));
    }

    /**
     * Whether this write is an update, a broadcast or a range delete: blind, so it takes no part in
     * conflict checks, though later writers of its keys conflict with it.
     */
    public boolean blind() {
        return type == MessageType.UPDATE || MessageType.isRange(type);
    }

    /** Whether this write covers a key range ({@link #range}). */
    public boolean isRange() {
        return MessageType.isRange(type);
    }

    /** The range this write covers; only for {@link #isRange} writes. */
    public RangeMessage range() {
        return RangeMessage.of(type, 0, 0, key, value);
    }

    /** The log's op code for the write. */
    @Override
    public byte opCode() {
        switch (type) {
            case MessageType.PUT:
                return CommitRecord.PUT;
            case MessageType.DELETE:
                return CommitRecord.DELETE;
            case MessageType.UPDATE:
                return CommitRecord.UPDATE;
            case MessageType.RANGE_UPDATE:
                return CommitRecord.RANGE_UPDATE;
            case MessageType.PUT_EXPIRING:
                return CommitRecord.PUT_EXPIRING;
            default:
                return CommitRecord.RANGE_DELETE;
        }
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
            case CommitRecord.PUT_EXPIRING:
                if (op.value() == null) {
                    throw new IllegalArgumentException("an expiring put without a value for index " + op.indexId());
                }
                return putExpiring(op.indexId(), tree, op.key(), op.value());
            case CommitRecord.UPDATE:
                if (op.value() == null || !UpdateList.wellFormed(java.nio.ByteBuffer.wrap(op.value()), 0, op.value().length)) {
                    throw new IllegalArgumentException("an update without a well-formed list of calls for index "
                            + op.indexId());
                }
                return update(op.indexId(), tree, op.key(), op.value());
            case CommitRecord.RANGE_UPDATE:
            case CommitRecord.RANGE_DELETE:
                byte type = op.type() == CommitRecord.RANGE_UPDATE ? MessageType.RANGE_UPDATE : MessageType.RANGE_DELETE;
                if (op.value() == null) {
                    throw new IllegalArgumentException("a range message without bounds for index " + op.indexId());
                }
                return new WriteOp(op.indexId(), tree, type, op.key(), op.value()); // which checks it
            default:
                throw new IllegalArgumentException("unknown op code " + op.type() + " for index " + op.indexId());
        }
    }
}
