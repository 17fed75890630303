package io.sluice.qa.chaos;

/** One property's verdict: held, or violated with the first counterexample found (null when it held). */
public record Verdict(String property, String counterexample)
{
    public static Verdict held(final String property)
    {
        return new Verdict(property, null);
    }

    public boolean holds()
    {
        return counterexample == null;
    }

    @Override
    public String toString()
    {
        return property + ": " + (holds() ? "ok" : "violated: " + counterexample);
    }
}
