package io.betree.internal.tree;

import io.betree.internal.fault.BetreeException;

/**
 * The update functions of an environment, by name: what an {@link MessageType#UPDATE} message's
 * {@link UpdateList} names. The API layer registers them; the tree calls them where an update meets
 * the value before it, which may be long after the update committed (a flush, a read, recovery), so
 * a function must be deterministic: the same key, old value and argument always give the same
 * result.
 *
 * <p>Implementations are thread-safe: flushers and readers call them at once.
 */
public interface UpdateFunctions {
    /** An environment with no functions registered: every name is unknown. */
    UpdateFunctions NONE = new UpdateFunctions() {
        @Override
        public byte[] apply(String name, byte[] key, byte[] oldValue, byte[] argument) {
            throw unknown(name);
        }

        @Override
        public boolean knows(String name) {
            return false;
        }
    };

    /**
     * The value after function {@code name} changed {@code oldValue} (null: the key is absent) of
     * {@code key} with {@code argument}; null deletes the key. The arrays are the caller's; the
     * function must not change them, and the caller does not change the one returned.
     *
     * @throws BetreeException if no function is registered under {@code name}
     */
    byte[] apply(String name, byte[] key, byte[] oldValue, byte[] argument);

    /** Whether a function is registered under {@code name}. */
    boolean knows(String name);

    /**
     * The environment's clock, milliseconds since the epoch: what expiring values
     * ({@link MessageType#PUT_EXPIRING}) are read against, and rows dropped by once expired. Here,
     * beside the functions, because it too is the environment's and is read where messages meet
     * rows. The system clock unless overridden; thread-safe.
     */
    default long nowMillis() {
        return System.currentTimeMillis();
    }

    /**
     * Told that function {@code name} threw {@code failure} on a value of {@code key}: the call then
     * changed nothing ({@link UpdateList#apply}). Thread-safe; does nothing unless overridden.
     */
    default void failed(String name, byte[] key, Throwable failure) {
    }

    /** The failure of a message that names a function nobody registered. */
    static BetreeException unknown(String name) {
        return unknown(name, "no update function is registered under the name \"" + name + "\"");
    }

    /**
     * The failure of opening an environment whose index {@code index} may hold messages that call
     * {@code name}, which nobody registered.
     */
    static BetreeException unknownIn(String index, String name) {
        return unknown(name, "index \"" + index + "\" may hold updates that call the function \"" + name
                + "\", which is not registered");
    }

    private static BetreeException unknown(String name, String what) {
        return new BetreeException(what + ": register it with EnvironmentOptions.updateFunction before opening the"
                + " environment");
    }
}
