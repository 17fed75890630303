package io.sluice.qa.chaos;

/**
 * How an operation ended, as its client saw it: {@code OK} (the contract's success answer), {@code FAILED} (an answer
 * saying nothing was done, or a definite refusal), {@code UNKNOWN} (no answer, a timeout, or an answer that leaves
 * open whether it took effect: a 503/504 may have been applied on some replicas).
 */
public enum Outcome
{
    OK, FAILED, UNKNOWN
}
