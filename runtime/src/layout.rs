//! ndarray arrays in a kernel's rewritten loops: an array in standard layout
//! (row-major and contiguous, so that its `as_slice()` is `Some`) seen as one slice
//! of rows ([`Rows`], [`RowsMut`]), where `a[[i, j]]` is element `i * cols + j`; and
//! what a call whose array is not in standard layout (a transposed view, a strided
//! slice `s![.., ..;2]`) reports ([`Strided`]): such a call runs the body as written,
//! and its kernel says so once ([`Kernel::ran_as_written`](crate::Kernel::ran_as_written),
//! the table's [`AsWritten`](crate::AsWritten) line).
//!
//! Nothing here names an ndarray type: generated code calls the methods of the
//! caller's arrays (`as_slice()`, `as_slice_mut()`, `shape()`, `strides()`), so
//! these helpers serve every ndarray version that has them (0.16 and 0.17 are
//! tested), and safe slices do the indexing (no pointer arithmetic).
//!
//! An array of more than two axes is seen as rows of its last axis: `rows` is the
//! product of the others (`dims`), which is how a rewrite maps `[[i, j, k]]` to
//! `(i * n1 + j) * n2 + k` row by row.

use std::fmt;

/// `(rows, cols)` of an array of `shape` seen row-major: the product of every axis
/// but the last, and the last (a 1-D array is one row; a 0-D array one row of one).
/// Saturating, so any shape gives an answer (a real array's element count fits `usize`).
pub fn dims(shape: &[usize]) -> (usize, usize) {
    match shape.split_last() {
        None => (1, 1),
        Some((&cols, leading)) => (leading.iter().fold(1usize, |n, &d| n.saturating_mul(d)), cols),
    }
}

/// Where `[[i, j]]` is in a row-major `rows × cols` slice, or a panic where ndarray's
/// indexing panics (an index past its axis), so that a rewritten loop panics where the
/// loop as written would, never reading a neighbouring row instead.
#[inline]
#[track_caller]
fn flat(rows: usize, cols: usize, i: usize, j: usize) -> usize {
    if i >= rows || j >= cols {
        out_of_bounds(rows, cols, i, j)
    }
    i * cols + j
}

/// Where `a[[i, j]]` of a standard-layout array of `rows × cols` is in its slice: what a
/// variant's rewritten loop indexes where the macro could not prove `j` below `cols`.
///
/// # Panics
/// Where ndarray's `a[[i, j]]` panics: `i` or `j` past its axis (never the index of a
/// neighbouring row's element).
#[inline]
#[track_caller]
pub fn index(rows: usize, cols: usize, i: usize, j: usize) -> usize {
    flat(rows, cols, i, j)
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds(rows: usize, cols: usize, i: usize, j: usize) -> ! {
    panic!("ndarray: index [{i}, {j}] is out of bounds for an array of {rows} rows of {cols}")
}

/// A standard-layout array's elements as one row-major slice of `rows` rows of `cols`.
#[derive(Debug)]
pub struct Rows<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
}

// Copy and Clone whatever `T` is: a shared slice.
impl<T> Clone for Rows<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Rows<'_, T> {}

impl<'a, T> Rows<'a, T> {
    /// The array whose `as_slice()` is `data` and whose `(rows, cols)` ([`dims`] of its
    /// shape) is `dims`; `None` when it is not in standard layout (`data` is `None`) or
    /// `data` does not hold `rows × cols` elements.
    #[inline]
    pub fn new(data: Option<&'a [T]>, dims: (usize, usize)) -> Option<Rows<'a, T>> {
        let (rows, cols) = dims;
        let data = data?;
        (rows.checked_mul(cols) == Some(data.len())).then_some(Rows { data, rows, cols })
    }

    /// Its rows.
    #[inline]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Its columns (the length of its last axis).
    #[inline]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Every element, row after row.
    #[inline]
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }

    /// Row `i`.
    ///
    /// # Panics
    /// When `i` is not below [`rows`](Rows::rows), as ndarray's `row(i)` does.
    #[inline]
    #[track_caller]
    pub fn row(&self, i: usize) -> &'a [T] {
        if i >= self.rows {
            out_of_bounds(self.rows, self.cols, i, 0)
        }
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// The element `a[[i, j]]` of the array.
    ///
    /// # Panics
    /// Where ndarray's `a[[i, j]]` panics: `i` or `j` past its axis.
    #[inline]
    #[track_caller]
    pub fn at(&self, i: usize, j: usize) -> &'a T {
        &self.data[flat(self.rows, self.cols, i, j)]
    }

    /// The rows in order (as many as [`rows`](Rows::rows), also when they are empty).
    #[inline]
    pub fn iter_rows(&self) -> impl ExactSizeIterator<Item = &'a [T]> + 'a {
        let (data, cols) = (self.data, self.cols);
        (0..self.rows).map(move |i| &data[i * cols..(i + 1) * cols])
    }
}

/// A standard-layout array's elements as one writable row-major slice of `rows` rows
/// of `cols`; [`split_rows`](RowsMut::split_rows) gives threads bands of rows.
#[derive(Debug)]
pub struct RowsMut<'a, T> {
    data: &'a mut [T],
    rows: usize,
    cols: usize,
}

impl<'a, T> RowsMut<'a, T> {
    /// The array whose `as_slice_mut()` is `data` and whose `(rows, cols)` is `dims`
    /// (taken before the slice, which borrows the array); `None` when it is not in
    /// standard layout or `data` does not hold `rows × cols` elements.
    #[inline]
    pub fn new(data: Option<&'a mut [T]>, dims: (usize, usize)) -> Option<RowsMut<'a, T>> {
        let (rows, cols) = dims;
        let data = data?;
        (rows.checked_mul(cols) == Some(data.len())).then_some(RowsMut { data, rows, cols })
    }

    /// Its rows.
    #[inline]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Its columns.
    #[inline]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Every element, row after row.
    #[inline]
    pub fn as_slice_mut(&mut self) -> &mut [T] {
        self.data
    }

    /// Every element, row after row, for the rest of the borrow.
    #[inline]
    pub fn into_slice(self) -> &'a mut [T] {
        self.data
    }

    /// Row `i`, writable.
    ///
    /// # Panics
    /// When `i` is not below [`rows`](RowsMut::rows).
    #[inline]
    #[track_caller]
    pub fn row_mut(&mut self, i: usize) -> &mut [T] {
        if i >= self.rows {
            out_of_bounds(self.rows, self.cols, i, 0)
        }
        &mut self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// The element `a[[i, j]]`, writable.
    ///
    /// # Panics
    /// Where ndarray's `a[[i, j]]` panics.
    #[inline]
    #[track_caller]
    pub fn at_mut(&mut self, i: usize, j: usize) -> &mut T {
        &mut self.data[flat(self.rows, self.cols, i, j)]
    }

    /// The first `at` rows and the rest, each writable on its own (a band of rows for
    /// one thread); `at` past the last row gives every row and none.
    #[inline]
    pub fn split_rows(self, at: usize) -> (RowsMut<'a, T>, RowsMut<'a, T>) {
        let at = at.min(self.rows);
        let (head, tail) = self.data.split_at_mut(at * self.cols);
        (
            RowsMut { data: head, rows: at, cols: self.cols },
            RowsMut { data: tail, rows: self.rows - at, cols: self.cols },
        )
    }

    /// The rows in order, writable.
    #[inline]
    pub fn iter_rows_mut(&mut self) -> impl ExactSizeIterator<Item = &mut [T]> + '_ {
        let cols = self.cols;
        let mut rest: &mut [T] = self.data;
        (0..self.rows).map(move |_| {
            let (row, tail) = std::mem::take(&mut rest).split_at_mut(cols);
            rest = tail;
            row
        })
    }
}

/// The array that was not in standard layout when a call ran its body as written:
/// which parameter, and its shape and strides (in elements) then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strided {
    /// The parameter's name.
    pub param: &'static str,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its strides, in elements (negative for a reversed axis).
    pub strides: Vec<isize>,
}

impl fmt::Display for Strided {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not in standard layout (shape {:?}, strides {:?})", self.param, self.shape, self.strides)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_are_the_leading_axes_and_the_last() {
        assert_eq!(dims(&[3, 4]), (3, 4));
        assert_eq!(dims(&[2, 3, 4]), (6, 4));
        assert_eq!(dims(&[7]), (1, 7));
        assert_eq!(dims(&[]), (1, 1));
        assert_eq!(dims(&[5, 0]), (5, 0));
        assert_eq!(dims(&[0, 5]), (0, 5));
        assert_eq!(dims(&[usize::MAX, 2, 0]), (usize::MAX, 0), "saturates");
    }

    #[test]
    fn rows_index_row_major_and_refuse_what_is_not_standard() {
        let data: Vec<i32> = (0..12).collect();
        let a = Rows::new(Some(&data[..]), (3, 4)).unwrap();
        assert_eq!((a.rows(), a.cols()), (3, 4));
        assert_eq!(*a.at(2, 1), 9);
        assert_eq!(a.row(1), &[4, 5, 6, 7]);
        assert_eq!(a.iter_rows().map(|r| r[0]).collect::<Vec<_>>(), [0, 4, 8]);
        assert_eq!(a.as_slice().len(), 12);
        assert!(Rows::<i32>::new(None, (3, 4)).is_none(), "not in standard layout");
        assert!(Rows::new(Some(&data[..]), (3, 5)).is_none(), "not rows × cols elements");
        assert!(Rows::new(Some(&data[..]), (usize::MAX, 2)).is_none(), "overflow");
        let empty: [i32; 0] = [];
        let e = Rows::new(Some(&empty[..]), (4, 0)).unwrap();
        assert_eq!(e.iter_rows().len(), 4, "four empty rows");
        assert!(e.iter_rows().all(<[i32]>::is_empty));
    }

    #[test]
    #[should_panic(expected = "index [0, 4] is out of bounds for an array of 3 rows of 4")]
    fn a_column_past_the_row_panics_rather_than_reading_the_next_row() {
        let data = [0.0_f32; 12];
        Rows::new(Some(&data[..]), (3, 4)).unwrap().at(0, 4);
    }

    #[test]
    #[should_panic(expected = "index [3, 0] is out of bounds")]
    fn a_row_past_the_last_panics() {
        let data = [0.0_f32; 12];
        Rows::new(Some(&data[..]), (3, 4)).unwrap().row(3);
    }

    #[test]
    fn rows_mut_write_in_place_and_split_into_bands() {
        let mut data = vec![0; 12];
        let mut a = RowsMut::new(Some(&mut data[..]), (3, 4)).unwrap();
        *a.at_mut(1, 2) = 7;
        a.row_mut(2)[3] = 9;
        for (i, row) in a.iter_rows_mut().enumerate() {
            row[0] = i as i32 + 1;
        }
        let (mut top, mut rest) = a.split_rows(1);
        assert_eq!((top.rows(), rest.rows()), (1, 2));
        top.as_slice_mut()[1] = 5;
        *rest.at_mut(1, 1) = 8;
        let (all, none) = rest.split_rows(10);
        assert_eq!((all.rows(), none.rows()), (2, 0));
        assert_eq!(all.into_slice().len(), 8);
        assert_eq!(data, [1, 5, 0, 0, 2, 0, 7, 0, 3, 8, 0, 9]);
        let mut empty: [u8; 0] = [];
        let mut e = RowsMut::new(Some(&mut empty[..]), (2, 0)).unwrap();
        assert_eq!(e.iter_rows_mut().len(), 2);
        assert!(RowsMut::<u8>::new(None, (1, 1)).is_none());
    }

    #[test]
    fn a_strided_array_says_which_and_how() {
        let s = Strided { param: "a", shape: vec![4, 3], strides: vec![1, 4] };
        assert_eq!(s.to_string(), "`a` is not in standard layout (shape [4, 3], strides [1, 4])");
    }
}
