package io.betree;

/**
 * A function that changes a key's value without the writer reading it: registered under a name
 * with {@link EnvironmentOptions#updateFunction}, called by {@link Index#update}. An update is a
 * message that travels down the tree and meets the key's value later, wherever that value is (in a
 * flush, a read, or recovery after a crash), so incrementing a counter or setting one field costs
 * a write, not a read and a write.
 *
 * <p>Contract: the function must be deterministic (the same key, old value and argument give the
 * same result every time: it may run several times, on different threads, long after the update
 * committed, and again after a restart), must not modify its arguments, and must be thread-safe.
 * It must accept every old value it can meet, null included. An update calls it once at the call
 * with a null old value, to check the argument: an exception there fails the update and changes
 * nothing; so does one thrown on the value a transaction itself put, to which its update is applied
 * at once. An exception thrown later, on a real old value, cannot fail the update any more (it
 * committed): that call then changes nothing, wherever the update meets the value, and
 * {@link Environment#failedUpdateCalls} counts it. So does a result longer than
 * {@link Index#MAX_VALUE_BYTES}.
 */
@FunctionalInterface
public interface UpdateFunction {
    /**
     * The new value of {@code key}.
     *
     * @param key the key, not to be modified
     * @param oldValue the value before the update, or null when the key is absent; not to be modified
     * @param argument what the update passed, not to be modified
     * @return the new value (at most {@link Index#MAX_VALUE_BYTES}), or null to delete the key
     */
    byte[] apply(byte[] key, byte[] oldValue, byte[] argument);
}
