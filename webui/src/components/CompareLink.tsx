// "Compare": opens the Compare page with these trials (or all the trials of
// these experiments) added to the tab's latest comparison.
import { Link } from 'react-router';
import { addToComparison } from '../lib/compare';
import { paths } from '../paths';

export function CompareLink({
  trials,
  experiments,
  label,
}: {
  trials?: number[];
  experiments?: number[];
  label: string;
}) {
  // The latest comparison is read as the link is drawn (each time a page
  // that has it opens).
  return (
    <Link to={paths.compare(addToComparison({ trials, experiments }))} className="btn" aria-label={label}>
      Compare
    </Link>
  );
}
