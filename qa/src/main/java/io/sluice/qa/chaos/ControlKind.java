package io.sluice.qa.chaos;

/** The exporting-control operations (CONTRACT §3) and the pair state each leaves. */
public enum ControlKind
{
    PAUSE("pause", "PAUSED"),
    SOFT_PAUSE("soft-pause", "SOFT_PAUSED"),
    RESUME("resume", "EXPORTING");

    private final String reportName;
    private final String state;

    ControlKind(final String reportName, final String state)
    {
        this.reportName = reportName;
        this.state = state;
    }

    public String reportName()
    {
        return reportName;
    }

    /** The pair state {@code GET /actuator/exporting} shows once this operation holds. */
    public String state()
    {
        return state;
    }
}
