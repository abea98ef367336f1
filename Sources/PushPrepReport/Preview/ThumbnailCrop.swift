/// A thumbnail clipping rectangle as `UNNotificationAttachmentOptionsThumbnailClippingRectKey`
/// gives it: the part of the image the thumbnail shows, normalised to the image (0...1, origin
/// at the top left). Made with the memberwise initialiser, which does not check it; ``clamped``
/// does.
package struct ClippingRect: Sendable, Equatable, Hashable {
    package var x: Double
    package var y: Double
    package var width: Double
    package var height: Double

    /// The rectangle inside the unit square, or nil when nothing of it is (empty, negative or not
    /// finite): the phone then shows the whole image, and so does the preview.
    package var clamped: ClippingRect? {
        guard [x, y, width, height].allSatisfy(\.isFinite) else { return nil }
        let left = min(max(x, 0), 1)
        let top = min(max(y, 0), 1)
        let right = min(max(x + width, 0), 1)
        let bottom = min(max(y + height, 0), 1)
        guard right > left, bottom > top else { return nil }
        return ClippingRect(x: left, y: top, width: right - left, height: bottom - top)
    }
}

/// Where the image goes inside the banner's square thumbnail box, as iOS draws it: the image (or
/// the clipping rectangle's part of it) fills the square, centred, the overflow cut off
/// (aspect fill). Percentages of the box's side, so the same numbers serve any box size; the
/// preview draws the box as an SVG `viewBox="0 0 100 100"` (which clips like `overflow: hidden`)
/// with the image placed at these numbers.
package struct ThumbnailCrop: Sendable, Equatable {
    /// The image's width and height, in % of the box's side.
    package var width: Double
    package var height: Double
    /// The image's top-left corner from the box's, in % of the box's side (0 or negative).
    package var left: Double
    package var top: Double
}

extension ThumbnailCrop {
    /// The crop of an image of `imageWidth` × `imageHeight` pixels, showing `clip` (normalised)
    /// or, without one, the whole image. Nil for an image without pixels.
    package init?(imageWidth: Int, imageHeight: Int, clip: ClippingRect? = nil) {
        guard imageWidth > 0, imageHeight > 0 else { return nil }
        let w = Double(imageWidth)
        let h = Double(imageHeight)
        let region = clip?.clamped ?? ClippingRect(x: 0, y: 0, width: 1, height: 1)
        // The region in pixels; its shorter side becomes the box's side (aspect fill).
        let regionWidth = region.width * w
        let regionHeight = region.height * h
        let side = min(regionWidth, regionHeight)
        let centreX = (region.x + region.width / 2) * w
        let centreY = (region.y + region.height / 2) * h
        // One pixel of the image is 100 / side % of the box; the region's centre sits at 50 %.
        width = w / side * 100
        height = h / side * 100
        left = 50 - centreX / side * 100
        top = 50 - centreY / side * 100
    }

    /// The numbers as SVG attributes (`x`, `y`, `width`, `height`) in a `viewBox="0 0 100 100"`
    /// square, two decimals: an `<image>` placed so needs no inline style, which the report's and
    /// the console's Content-Security-Policy refuse.
    package var svgAttributes: (x: String, y: String, width: String, height: String) {
        (Self.number(left), Self.number(top), Self.number(width), Self.number(height))
    }

    /// `value` with at most two decimals, no trailing `.0`, and no `-0`.
    package static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let rounded = (value * 100).rounded() / 100
        let text = rounded == 0 ? "0" : String(rounded)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}
