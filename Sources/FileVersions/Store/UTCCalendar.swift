import Foundation

/// The Gregorian calendar in UTC, for the dates in version ids, records and conflict-copy names
/// (built once: a `Calendar` is costly to make).
let utcCalendar: Calendar = {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar
}()
