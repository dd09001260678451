package io.betree.internal.txn;

import io.betree.internal.fault.BetreeException;

/**
 * A transaction wrote a key that another transaction committed after its snapshot began (first
 * committer wins). The API turns it into its public twin {@code io.betree.WriteConflictException}.
 */
public class WriteConflictException extends BetreeException {
    private static final long serialVersionUID = 1L;

    /** The message names the index and says which side committed first. */
    public WriteConflictException(String message) {
        super(message);
    }
}
