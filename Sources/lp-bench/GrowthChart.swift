import Foundation

/// A hand-written SVG of small multiples: one panel per figure, each with its axes, their labels
/// and one line through its points. The x axis is logarithmic (the sizes go up tenfold), ticked
/// at the points measured; the y axis starts at zero, so a line's slope is how much the cost grew.
struct GrowthChart {
    struct Panel {
        var title: String
        var xTitle: String
        var yUnit: String
        var x: [Double]
        var y: [Double]
    }

    var panels: [Panel]
    var columns = 3
    static let panelWidth = 300.0, panelHeight = 220.0
    /// The plot's margins inside a panel: room for the title, the tick labels and the axis titles.
    static let left = 58.0, right = 16.0, top = 34.0, bottom = 46.0

    func svg() -> String {
        let rows = (panels.count + columns - 1) / columns
        let width = Self.panelWidth * Double(min(columns, panels.count)), height = Self.panelHeight * Double(rows)
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.number(width))" height="\(Self.number(height))" \
            viewBox="0 0 \(Self.number(width)) \(Self.number(height))" font-family="system-ui, sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>

            """
        for (index, panel) in panels.enumerated() {
            let originX = Double(index % columns) * Self.panelWidth, originY = Double(index / columns) * Self.panelHeight
            out += "<g transform=\"translate(\(Self.number(originX)),\(Self.number(originY)))\">\n"
            out += Self.draw(panel)
            out += "</g>\n"
        }
        return out + "</svg>\n"
    }

    private static func draw(_ panel: Panel) -> String {
        let plotLeft = left, plotRight = panelWidth - right, plotTop = top, plotBottom = panelHeight - bottom
        let logs = panel.x.map { log10(max($0, 1)) }
        let lowX = logs.min() ?? 0, highX = max(logs.max() ?? 1, lowX + 1)
        // Headroom above the highest point for its value's label.
        let ticks = niceTicks(upTo: (panel.y.max() ?? 1) * 1.15)
        let highY = ticks.last ?? 1
        // The first and last points a little inside the axes, so their labels stay clear of them.
        let inset = 0.06 * (plotRight - plotLeft)
        func px(_ value: Double) -> Double { plotLeft + inset + (log10(max(value, 1)) - lowX) / (highX - lowX) * (plotRight - plotLeft - 2 * inset) }
        func py(_ value: Double) -> Double { plotBottom - value / highY * (plotBottom - plotTop) }

        var out = "<text x=\"\(number(panelWidth / 2))\" y=\"18\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"600\">\(escape(panel.title))</text>\n"
        // Axes.
        out += "<line x1=\"\(number(plotLeft))\" y1=\"\(number(plotBottom))\" x2=\"\(number(plotRight))\" y2=\"\(number(plotBottom))\" stroke=\"#333\"/>\n"
        out += "<line x1=\"\(number(plotLeft))\" y1=\"\(number(plotTop))\" x2=\"\(number(plotLeft))\" y2=\"\(number(plotBottom))\" stroke=\"#333\"/>\n"
        for tick in ticks {
            let y = py(tick)
            out += "<line x1=\"\(number(plotLeft - 4))\" y1=\"\(number(y))\" x2=\"\(number(plotRight))\" y2=\"\(number(y))\" stroke=\"#ddd\"/>\n"
            out += "<text x=\"\(number(plotLeft - 7))\" y=\"\(number(y + 4))\" text-anchor=\"end\">\(escape(tickLabel(tick)))</text>\n"
        }
        for value in panel.x {
            let x = px(value)
            out += "<line x1=\"\(number(x))\" y1=\"\(number(plotBottom))\" x2=\"\(number(x))\" y2=\"\(number(plotBottom + 4))\" stroke=\"#333\"/>\n"
            out += "<text x=\"\(number(x))\" y=\"\(number(plotBottom + 16))\" text-anchor=\"middle\">\(escape(GrowthBenchmark.label(Int(value))))</text>\n"
        }
        out += "<text x=\"\(number((plotLeft + plotRight) / 2))\" y=\"\(number(panelHeight - 8))\" text-anchor=\"middle\" fill=\"#555\">\(escape(panel.xTitle)) (log scale)</text>\n"
        out += "<text transform=\"translate(14,\(number((plotTop + plotBottom) / 2))) rotate(-90)\" text-anchor=\"middle\" fill=\"#555\">\(escape(panel.yUnit))</text>\n"
        // The series: its line, its points and their values.
        let points = zip(panel.x, panel.y).map { (px($0), py($1)) }
        out += "<polyline fill=\"none\" stroke=\"#1565c0\" stroke-width=\"2\" points=\"\(points.map { "\(number($0.0)),\(number($0.1))" }.joined(separator: " "))\"/>\n"
        for ((x, y), value) in zip(points, panel.y) {
            out += "<circle cx=\"\(number(x))\" cy=\"\(number(y))\" r=\"3.5\" fill=\"#1565c0\"/>\n"
            out += "<text x=\"\(number(x))\" y=\"\(number(y - 8))\" text-anchor=\"middle\" fill=\"#1565c0\">\(escape(valueLabel(value)))</text>\n"
        }
        return out
    }

    /// Zero and up to four steps of 1, 2 or 5 times a power of ten, the last at or above `maximum`.
    static func niceTicks(upTo maximum: Double) -> [Double] {
        guard maximum > 0, maximum.isFinite else { return [0, 1] }
        let rough = maximum / 4
        let power = pow(10, floor(log10(rough)))
        let step = [1.0, 2.0, 5.0, 10.0].map { $0 * power }.first { $0 >= rough } ?? 10 * power
        let count = Int((maximum / step).rounded(.up))
        return (0...max(count, 1)).map { Double($0) * step }
    }

    static func tickLabel(_ value: Double) -> String {
        if value >= 1000 && value.truncatingRemainder(dividingBy: 1000) == 0 { return "\(Int(value / 1000))k" }
        return value == value.rounded() ? "\(Int(value))" : String(format: "%g", value)
    }

    static func valueLabel(_ value: Double) -> String {
        if value >= 10_000 { return String(format: "%.0fk", value / 1000) }
        if value >= 100 { return String(format: "%.0f", value) }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    private static func number(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
