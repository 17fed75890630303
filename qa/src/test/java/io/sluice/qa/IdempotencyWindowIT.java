package io.sluice.qa;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.util.concurrent.TimeUnit;

/**
 * Issue 14's last case, on the shared cluster: after {@code sluice.records.idempotency-window} the key of
 * {@link IdempotentAppendsIT}'s first case is forgotten. It runs as the last class on the shared cluster
 * ({@link SharedCluster.RunsLast}), so the window (150 s) runs out while the classes between run instead of being
 * waited out; run alone, it uses a key first and waits the window.
 */
@SharedCluster.RunsLast
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@Execution(ExecutionMode.SAME_THREAD)
class IdempotencyWindowIT
{
    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    @Test
    void afterTheWindowTheKeyIsForgottenAndTheRequestAppendsAgain()
    {
        IdempotentAppendsIT.assertForgottenAfterTheWindow(SHARED.cluster());
    }
}
